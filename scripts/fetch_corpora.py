#!/usr/bin/env python3
"""Downloads the pinned real-source corpora of scripts/corpora.json and unpacks each into
$XCSH_CORPORA/<name>-<version> (default ~/.cache/xcsh-corpora).

Every archive is checked against its pinned sha256 before it is unpacked; a package whose
directory already holds a stamp with that sha256 is skipped, so a second run downloads
nothing. npm tarballs and PyPI sdists come over HTTPS from their registries, Debian packages
through `apt-get download NAME[:ARCH]=VERSION` (after one `apt-get update` if apt does not
know the version yet) and `dpkg-deb -x`; a jar a package ships its sources in is unpacked
beside it as `<jar>.d/` (class files left out).

Usage: scripts/fetch-corpora.sh [--dir DIR] [--only NAME,...] [--stats]
  --stats   also print, per language, the files and bytes its corpus holds

Exit status: 0 when every package is there and verified, 1 when one could not be had (what
failed is named), 2 on bad usage.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
MANIFEST = os.path.join(HERE, "corpora.json")
STAMP = ".xcsh-corpus.json"

# ast-grep 0.51.1's extensions per language (ast-grep-language `extensions()`), used only
# for --stats here; the oracle test and the benchmark keep the same table.
EXTENSIONS = {
    "bash": ["bash", "bats", "cgi", "command", "env", "fcgi", "ksh", "sh", "tmux", "tool", "zsh"],
    "c": ["c", "h"],
    "cpp": ["cc", "hpp", "cpp", "c++", "hh", "cxx", "cu", "ino"],
    "csharp": ["cs"],
    "css": ["css", "scss"],
    "html": ["html", "htm", "xhtml"],
    "java": ["java"],
    "kotlin": ["kt", "ktm", "kts"],
    "lua": ["lua"],
    "php": ["php"],
    "ruby": ["rb", "rbw", "gemspec"],
    "scala": ["scala", "sc", "sbt"],
    "swift": ["swift"],
    "yaml": ["yaml", "yml"],
}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def default_dir() -> str:
    return os.environ.get("XCSH_CORPORA") or os.path.join(
        os.path.expanduser("~"), ".cache", "xcsh-corpora")


def sha256_of(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def package_dir(root: str, pkg: dict) -> str:
    return os.path.join(root, f"{pkg['name']}-{pkg['version']}")


def is_verified(dest: str, pkg: dict) -> bool:
    try:
        with open(os.path.join(dest, STAMP)) as f:
            stamp = json.load(f)
    except (OSError, ValueError):
        return False
    return stamp.get("sha256") == pkg["sha256"] and stamp.get("version") == pkg["version"]


class Failed(Exception):
    pass


def http_download(url: str, dest: str) -> None:
    last = None
    for attempt in range(3):
        try:
            with urllib.request.urlopen(url, timeout=60) as resp, open(dest, "wb") as out:
                shutil.copyfileobj(resp, out, 1 << 20)
            return
        except OSError as e:  # URLError and socket timeouts are OSErrors
            last = e
            time.sleep(2 * (attempt + 1))
    raise Failed(f"download of {url} failed: {last}")


_apt_updated = False


def apt_download(pkg: dict, workdir: str) -> str:
    """`apt-get download` of exactly the pinned version; returns the .deb's path."""
    global _apt_updated
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        raise Failed(f"{pkg['name']} is a Debian package: apt-get and dpkg-deb are needed")
    spec = f"{pkg['name']}:{pkg['arch']}={pkg['version']}" if pkg["arch"] != "all" \
        else f"{pkg['name']}={pkg['version']}"
    # apt drops to the _apt user to download: let it write here.
    os.chmod(workdir, 0o777)
    while True:
        res = subprocess.run(["apt-get", "download", "-q", spec], cwd=workdir,
                             capture_output=True, text=True, check=False)
        debs = [f for f in os.listdir(workdir) if f.endswith(".deb")]
        if res.returncode == 0 and len(debs) == 1:
            return os.path.join(workdir, debs[0])
        if not _apt_updated and os.geteuid() == 0:
            # A fresh machine's apt lists may be missing or older than the pin.
            log("   apt does not have it yet: apt-get update")
            _apt_updated = True
            subprocess.run(["apt-get", "update", "-qq"], check=False)
            continue
        raise Failed(f"apt-get download {spec} failed: {res.stderr.strip()}"
                     + ("" if os.geteuid() == 0 else " (as root, `apt-get update` may help)"))


def unpack_tar(archive: str, dest: str) -> None:
    with tarfile.open(archive) as tar:
        # "data": no absolute paths, no links out of the tree, no device files.
        tar.extractall(dest, filter="data")


def unpack_jar(jar: str, dest: str) -> None:
    """The jar's sources (everything but class files) into `dest`."""
    root = os.path.realpath(dest)
    with zipfile.ZipFile(jar) as z:
        for info in z.infolist():
            if info.is_dir() or info.filename.endswith(".class"):
                continue
            target = os.path.realpath(os.path.join(root, info.filename))
            if not target.startswith(root + os.sep):
                raise Failed(f"{jar}: entry {info.filename!r} leaves the directory")
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with z.open(info) as src, open(target, "wb") as out:
                shutil.copyfileobj(src, out)


def fetch(root: str, pkg: dict) -> str:
    dest = package_dir(root, pkg)
    if is_verified(dest, pkg):
        log(f"ok {pkg['name']} {pkg['version']} ({pkg['registry']}): already in {dest}")
        return dest
    log(f"-> {pkg['name']} {pkg['version']} ({pkg['registry']}, {pkg['bytes'] / 1e6:.1f} MB)")
    os.makedirs(root, exist_ok=True)
    work = tempfile.mkdtemp(prefix=f".{pkg['name']}-", dir=root)
    try:
        if pkg["registry"] in ("npm", "pypi", "crates"):
            archive = os.path.join(work, os.path.basename(pkg["url"]))
            http_download(pkg["url"], archive)
        elif pkg["registry"] == "debian":
            archive = apt_download(pkg, work)
        else:
            raise Failed(f"{pkg['name']}: unknown registry {pkg['registry']!r}")
        got = sha256_of(archive)
        if got != pkg["sha256"]:
            raise Failed(f"{pkg['name']} {pkg['version']}: sha256 {got}, expected "
                         f"{pkg['sha256']} (the registry served different bytes)")
        tree = os.path.join(work, "tree")
        os.makedirs(tree)
        if pkg["registry"] == "debian":
            subprocess.run(["dpkg-deb", "-x", archive, tree], check=True)
        else:
            unpack_tar(archive, tree)
        for jar in pkg.get("jars", []):
            unpack_jar(os.path.join(tree, jar), os.path.join(tree, jar + ".d"))
        for lang, sub in pkg["languages"].items():
            if not os.path.isdir(os.path.join(tree, sub)):
                raise Failed(f"{pkg['name']}: the {lang} directory {sub} is not in the package")
        with open(os.path.join(tree, STAMP), "w") as f:
            json.dump({"name": pkg["name"], "version": pkg["version"],
                       "registry": pkg["registry"], "sha256": pkg["sha256"]}, f, indent=1)
        if os.path.exists(dest):
            shutil.rmtree(dest)
        os.rename(tree, dest)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    log(f"ok {pkg['name']} {pkg['version']}: unpacked into {dest}")
    return dest


def language_files(tree: str, lang: str) -> list[str]:
    """Files under `tree` with one of the language's extensions (hidden ones left out, as
    both walkers do)."""
    exts = tuple("." + e for e in EXTENSIONS[lang])
    out = []
    for dirpath, dirs, files in os.walk(tree):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        out += [os.path.join(dirpath, f) for f in sorted(files)
                if f.endswith(exts) and not f.startswith(".")]
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dir", default=default_dir())
    p.add_argument("--only", help="comma-separated package names")
    p.add_argument("--stats", action="store_true")
    p.add_argument("--manifest", default=MANIFEST)
    args = p.parse_args()
    with open(args.manifest) as f:
        packages = json.load(f)["packages"]
    if args.only:
        wanted = set(args.only.split(","))
        unknown = wanted - {p["name"] for p in packages}
        if unknown:
            log(f"fetch-corpora: no package named {', '.join(sorted(unknown))}")
            return 2
        packages = [p for p in packages if p["name"] in wanted]

    failed = []
    for pkg in packages:
        try:
            fetch(args.dir, pkg)
        except (Failed, OSError, subprocess.CalledProcessError, tarfile.TarError,
                zipfile.BadZipFile) as e:
            log(f"FAILED {pkg['name']} {pkg['version']}: {e}")
            failed.append(pkg["name"])
    if args.stats:
        print(f"{'language':8} {'package':18} {'files':>6} {'bytes':>10}")
        for pkg in packages:
            if pkg["name"] in failed:
                continue
            for lang, sub in pkg["languages"].items():
                files = language_files(os.path.join(package_dir(args.dir, pkg), sub), lang)
                size = sum(os.path.getsize(f) for f in files)
                print(f"{lang:8} {pkg['name']:18} {len(files):6} {size:10}")
    if failed:
        log(f"fetch-corpora: could not fetch {', '.join(failed)}")
        return 1
    log(f"corpora ready in {args.dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
