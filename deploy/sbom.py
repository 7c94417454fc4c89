#!/usr/bin/env python3
"""Writes a CycloneDX 1.5 JSON bill of materials for tablestore binaries.

Usage: sbom.py VERSION BINARY...

The components are the Go modules each binary was linked from, as the Go
toolchain recorded them in the binary (`go version -m -json`), with the
module sums as hashes; the toolchain itself is listed too. A module
linked into several of the binaries (one per platform) is listed once.
"""
import base64
import datetime
import json
import os
import subprocess
import sys
import uuid


def build_info(binary):
    out = subprocess.run(["go", "version", "-m", "-json", binary],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def purl(path, version):
    return "pkg:golang/%s@%s" % (path, version)


def component(mod, release):
    """A CycloneDX component for a module the binary links. A module of
    this repository (built from its work tree: "(devel)", or replaced by a
    directory) takes the release's version."""
    rep = mod.get("Replace")
    if rep and rep.get("Version"):
        mod = rep
    elif rep or mod.get("Version", "(devel)") == "(devel)":
        mod = {"Path": mod["Path"], "Version": release}
    c = {
        "type": "library",
        "bom-ref": purl(mod["Path"], mod.get("Version", "")),
        "name": mod["Path"],
        "version": mod.get("Version", ""),
        "purl": purl(mod["Path"], mod.get("Version", "")),
        "scope": "required",
    }
    s = mod.get("Sum", "")
    if s.startswith("h1:"):
        # The Go sum is a base64 SHA-256 over the module's file hashes.
        c["hashes"] = [{"alg": "SHA-256", "content": base64.b64decode(s[3:]).hex()}]
    return c


def main(argv):
    if len(argv) < 3:
        sys.exit("usage: sbom.py VERSION BINARY...")
    version, binaries = argv[1], argv[2:]
    components, platforms, go_version = {}, [], ""
    for b in binaries:
        bi = build_info(b)
        go_version = bi.get("GoVersion", go_version)
        settings = {s["Key"]: s["Value"] for s in bi.get("Settings", [])}
        platforms.append("%s/%s" % (settings.get("GOOS", "?"), settings.get("GOARCH", "?")))
        for mod in bi.get("Deps", []):
            c = component(mod, version)
            components.setdefault(c["bom-ref"], c)
    main_ref = purl("github.com/tablestore/tablestore/cmd/tablestore", version)
    toolchain = {
        "type": "application",
        "bom-ref": "pkg:golang/std@" + go_version,
        "name": "go",
        "version": go_version,
        "purl": "pkg:golang/std@" + go_version,
        "scope": "required",
        "description": "the Go toolchain and standard library the binaries were built with",
    }
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "0")) or None
    stamp = datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc) if epoch \
        else datetime.datetime.now(datetime.timezone.utc)
    ordered = [components[k] for k in sorted(components)]
    bom = {
        "bomFormat": "CycloneDX",
        "specVersion": "1.5",
        # A name-based serial: the same release gives the same document.
        "serialNumber": "urn:uuid:%s" % uuid.uuid5(uuid.NAMESPACE_URL, main_ref),
        "version": 1,
        "metadata": {
            "timestamp": stamp.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "component": {
                "type": "application",
                "bom-ref": main_ref,
                "name": "tablestore",
                "version": version,
                "purl": main_ref,
                "properties": [{"name": "platform", "value": p} for p in platforms],
            },
        },
        "components": [toolchain] + ordered,
        "dependencies": [{"ref": main_ref,
                          "dependsOn": [toolchain["bom-ref"]] + [c["bom-ref"] for c in ordered]}],
    }
    json.dump(bom, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv)
