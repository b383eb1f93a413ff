"""The module's tooling, one package in layers; each module imports only from the layers below it.

  record, transcript   the evidence format: writing a transcript (record.py, the file the notebook
                       carries) and reading one (transcript.py); the standard library only
  readme               the READMEs: cog's generators for their blocks and the build-line reader
  sources              the source rules and the kernel finder: each README kernel as a unit
  capture, evidence, mutation, notebook, plot   the tools: capture a run, check the evidence, the
                       mutation run, the Colab notebook, the figures

Each tool's command line is tools/NAME.py (a script beside this package, so `python3 tools/NAME.py`
finds it with no path setting); the `--help` of each says what it does.
"""
