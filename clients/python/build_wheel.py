#!/usr/bin/env python3
"""Builds the tablestore-testkit wheel for one platform, offline, with the
standard library only: the tablestore_testkit package beside this file,
and the tablestore binary as the wheel's script (installed into the
environment's bin/ or Scripts/, so `tablestore` is on its PATH).

Usage: build_wheel.py --version V --platform OS/ARCH --binary FILE --out DIR
"""
import argparse
import base64
import hashlib
import io
import os
import re
import sys
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
NAME, MODULE = "tablestore-testkit", "tablestore_testkit"

# Go's GOOS/GOARCH to wheel platform tags. The binaries are static
# (CGO_ENABLED=0), so the oldest manylinux and musllinux tags both hold;
# Go 1.26 needs macOS 12 and Windows 10.
PLATFORM_TAGS = {
    "linux/amd64": ["manylinux_2_17_x86_64", "manylinux2014_x86_64", "musllinux_1_1_x86_64"],
    "linux/arm64": ["manylinux_2_17_aarch64", "manylinux2014_aarch64", "musllinux_1_1_aarch64"],
    "darwin/amd64": ["macosx_12_0_x86_64"],
    "darwin/arm64": ["macosx_12_0_arm64"],
    "windows/amd64": ["win_amd64"],
    "windows/arm64": ["win_arm64"],
}


def pep440(version):
    """The Python spelling of a release version: 1.2.3 stays,
    0.0.0-dev.gabc1234 becomes 0.0.0.dev0+gabc1234."""
    m = re.fullmatch(r"(\d+\.\d+\.\d+)(?:-dev\.(\w+))?", version)
    if not m:
        sys.exit("build_wheel: version %r is neither X.Y.Z nor X.Y.Z-dev.REV" % version)
    return m.group(1) + (".dev0+" + m.group(2) if m.group(2) else "")


def record_hash(data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode()


def metadata(version):
    with open(os.path.join(HERE, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return ("Metadata-Version: 2.1\n"
            "Name: %s\n"
            "Version: %s\n"
            "Summary: tablestore for Python tests: an Azure Table service in memory, "
            "with a pytest plugin\n"
            "Requires-Python: >=3.8\n"
            "Classifier: Framework :: Pytest\n"
            "Description-Content-Type: text/markdown\n"
            "\n%s" % (NAME, version, readme))


def build(version, platform, binary, out):
    tags = PLATFORM_TAGS[platform]
    pyver = pep440(version)
    dist = "%s-%s" % (MODULE, pyver)
    exe = "tablestore.exe" if platform.startswith("windows/") else "tablestore"
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))
    stamp = max(time.gmtime(epoch)[:6], (1980, 1, 1, 0, 0, 0))

    files = []  # (name in the wheel, bytes, executable)
    pkg_dir = os.path.join(HERE, MODULE)
    for fn in sorted(os.listdir(pkg_dir)):
        if fn.endswith(".py"):
            with open(os.path.join(pkg_dir, fn), "rb") as f:
                files.append(("%s/%s" % (MODULE, fn), f.read(), False))
    with open(binary, "rb") as f:
        files.append(("%s.data/scripts/%s" % (dist, exe), f.read(), True))
    info = dist + ".dist-info"
    wheel = "Wheel-Version: 1.0\nGenerator: tablestore build_wheel.py\nRoot-Is-Purelib: false\n"
    wheel += "".join("Tag: py3-none-%s\n" % t for t in tags)
    files += [
        (info + "/METADATA", metadata(pyver).encode(), False),
        (info + "/WHEEL", wheel.encode(), False),
        (info + "/entry_points.txt",
         b"[pytest11]\ntablestore = tablestore_testkit.pytest_plugin\n", False),
    ]
    record = io.StringIO()
    for name, data, _ in files:
        record.write("%s,%s,%d\n" % (name, record_hash(data), len(data)))
    record.write("%s/RECORD,,\n" % info)
    files.append((info + "/RECORD", record.getvalue().encode(), False))

    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "%s-py3-none-%s.whl" % (dist, ".".join(tags)))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data, executable in files:
            zi = zipfile.ZipInfo(name, stamp)
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = (0o100755 if executable else 0o100644) << 16
            z.writestr(zi, data)
    print(path)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--version", required=True)
    ap.add_argument("--platform", required=True, choices=sorted(PLATFORM_TAGS))
    ap.add_argument("--binary", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    build(a.version, a.platform, a.binary, a.out)


if __name__ == "__main__":
    main()
