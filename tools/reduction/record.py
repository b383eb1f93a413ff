"""Writing a transcript: the one writer of the evidence format, and the fingerprint it records.
Python's standard library only: the notebook carries this file verbatim, nothing else of the package.

write() puts a header of `# key: value` lines (date UTC, gpu, driver, cuda, build, one `# source:
PATH sha256=HEX fingerprint=HEX` line a source, command, exit code, `# output: sha256=HEX`, the
seal of the body), one `#` line, then the body verbatim (transcript.py reads it). fingerprint(path)
is the sha256 of a C++/CUDA source with every comment and whitespace character removed outside
string and character literals (kept byte for byte): editing a comment, re-wrapping or re-indenting
leaves a transcript current; changing any token of code (a name, a number, a string) makes it stale.
"""
import hashlib
import os
import re
import subprocess

def segments(text):
    """C++ TEXT as (kind, text) pieces, kind `comment`, `literal` (a string or character literal;
    not the ' of a 1'000 digit separator; it ends at its line's end) or `code`."""
    i, n = 0, len(text)
    while i < n:
        if text.startswith("//", i) or text.startswith("/*", i):
            j = text.find("\n", i) if text[i + 1] == "/" else text.find("*/", i + 2) + 2
            kind, j = "comment", n if j < 2 else j
        elif text[i] == '"' or (text[i] == "'" and not (i and text[i - 1].isalnum())):
            j = i + 1
            while j < n and text[j] not in (text[i], "\n"):
                j += 2 if text[j] == "\\" else 1
            kind, j = "literal", min(j + 1, n)
        else:
            kind, j = "code", i + 1
            while j < n and text[j] not in "/\"'":
                j += 1
        yield kind, text[i:j]
        i = j

def fingerprint(path):
    """The hex sha256 of the code tokens of the file at PATH (see above); OSError if unreadable."""
    with open(path, encoding="utf-8") as f:
        kept = "".join(t if k == "literal" else re.sub(r"\s+", "", t) if k == "code" else ""
                       for k, t in segments(f.read()))
    return hashlib.sha256(kept.encode()).hexdigest()

def query(cmd):
    """CMD's stdout, stripped; '' when it cannot run or takes over 60 s."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""

def gpu_present():
    """True when nvidia-smi lists a GPU (the same test as tools/gpu_test.sh's)."""
    return any(l.startswith("GPU ") for l in query(["nvidia-smi", "-L"]).splitlines())

def gpu_facts():
    """(GPU name, driver version, nvcc's last --version line); `unknown...` where not found."""
    first = (query(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"])
             .splitlines() or [""])[0]
    name, driver = [s.strip() for s in first.split(",", 1)] if "," in first else \
        ("unknown-gpu", "unknown")
    cuda = query(["nvcc", "--version"]).splitlines()
    return name, driver, cuda[-1] if cuda else "unknown"

def write(out_dir, mode, started, build, sources, command, code, body, root="."):
    """Writes OUT_DIR/MODE.txt, replacing the one there (the evidence is the current record; git
    keeps the earlier ones), and returns its path. STARTED: a UTC datetime; BUILD, COMMAND: the lines
    shown; SOURCES: paths under ROOT, named relative to it; CODE: the exit code; BODY: the
    output. OSError when a source cannot be read or OUT_DIR written."""
    name, driver, cuda = gpu_facts()
    header = [f"# date: {started:%Y-%m-%d %H:%M:%S} UTC", f"# gpu: {name}", f"# driver: {driver}",
              f"# cuda: {cuda}", f"# build: {build}"]
    for path in (os.path.join(root, s) for s in sources):
        with open(path, "rb") as f:
            header.append(f"# source: {os.path.relpath(path, root)} sha256="
                          f"{hashlib.sha256(f.read()).hexdigest()} fingerprint={fingerprint(path)}")
    seal = hashlib.sha256(body.encode("utf-8")).hexdigest()
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{mode}.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(header + [f"# command: {command}", f"# exit code: {code}",
                                    f"# output: sha256={seal}", "#"]) + "\n" + body)
    return path
