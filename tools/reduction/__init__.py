"""The module's tooling, one package in layers; each module imports only from the layers below:
record, transcript (the evidence format, written and read; the standard library only), readme (the
READMEs: cog's generators, the build-line reader), sources (the source rules; each README kernel
as a unit), then the tools: capture, evidence, mutation, notebook, plot. Each tool's command line
is tools/NAME.py, a script beside this package; its --help says what it does.
"""
