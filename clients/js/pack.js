#!/usr/bin/env node
'use strict';
// Packs the npm packages of a release with `npm pack`, offline:
// @tablestore/testkit-<platform>-<arch> for each built platform (the
// binary, with os and cpu fields so npm installs only the matching one)
// and @tablestore/testkit (the helper, with every platform package as an
// optional dependency of the same version).
//
// Usage: pack.js --version V --bin-dir DIR --out DIR --work DIR OS/ARCH...
// where DIR/OS-ARCH/ holds the binary built for OS/ARCH.

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const NODE_OS = { linux: 'linux', darwin: 'darwin', windows: 'win32' };
const NODE_CPU = { amd64: 'x64', arm64: 'arm64' };
// Every platform a release builds: the helper names them all, whichever
// this run packs.
const ALL = ['linux/amd64', 'linux/arm64', 'darwin/amd64', 'darwin/arm64', 'windows/amd64', 'windows/arm64'];

function parseArgs(argv) {
  const opts = { platforms: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith('--')) opts[a.slice(2).replace(/-(\w)/g, (_, c) => c.toUpperCase())] = argv[++i];
    else opts.platforms.push(a);
  }
  for (const k of ['version', 'binDir', 'out', 'work']) {
    if (!opts[k]) throw new Error(`pack.js: --${k.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase())} is required`);
  }
  return opts;
}

function platformPackage(p) {
  const [goos, goarch] = p.split('/');
  const os = NODE_OS[goos];
  const cpu = NODE_CPU[goarch];
  if (!os || !cpu) throw new Error(`pack.js: unknown platform ${p}`);
  return { goos, goarch, os, cpu, name: `@tablestore/testkit-${os}-${cpu}` };
}

function npmPack(dir, out) {
  const file = execFileSync('npm', ['pack', '--silent', '--pack-destination', out], {
    cwd: dir, encoding: 'utf8', env: { ...process.env, npm_config_update_notifier: 'false' },
  }).trim().split('\n').pop();
  console.log(path.join(out, file));
}

function main() {
  const o = parseArgs(process.argv.slice(2));
  const out = path.resolve(o.out);
  fs.mkdirSync(out, { recursive: true });

  for (const p of o.platforms) {
    const pkg = platformPackage(p);
    const exe = pkg.goos === 'windows' ? 'tablestore.exe' : 'tablestore';
    const dir = path.join(o.work, `${pkg.os}-${pkg.cpu}`);
    fs.mkdirSync(path.join(dir, 'bin'), { recursive: true });
    fs.copyFileSync(path.join(o.binDir, `${pkg.goos}-${pkg.goarch}`, exe), path.join(dir, 'bin', exe));
    fs.chmodSync(path.join(dir, 'bin', exe), 0o755);
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({
      name: pkg.name,
      version: o.version,
      description: `The tablestore binary for ${pkg.os} ${pkg.cpu}, for @tablestore/testkit`,
      os: [pkg.os],
      cpu: [pkg.cpu],
      files: [`bin/${exe}`],
      preferUnplugged: true,
    }, null, 2) + '\n');
    npmPack(dir, out);
  }

  const helper = path.join(o.work, 'testkit');
  fs.cpSync(path.join(__dirname, 'testkit'), helper, { recursive: true });
  const manifest = JSON.parse(fs.readFileSync(path.join(helper, 'package.json'), 'utf8'));
  manifest.version = o.version;
  manifest.optionalDependencies = Object.fromEntries(ALL.map((p) => [platformPackage(p).name, o.version]));
  fs.writeFileSync(path.join(helper, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');
  npmPack(helper, out);
}

main();
