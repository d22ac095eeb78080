"""One file of a run over several, in a process of its own (cli/many.py starts it, as
main(REQUEST.json, REPLY.json)).

The request names the command, the file and the command's options; the reply holds the
file's exit code, its targets' counts and its report, already printed (text at the console's
width and colours, or its JSON document), or the file's error. The user's own output goes to
this process's stdout and stderr, which the parent shows before the file's report. A file
that ends the process (os._exit, a crash in C code) leaves no reply: the parent says so."""
import io
import json
import os
import sys


def main(request_path, reply_path):
    from . import common, interrupts
    sys.dont_write_bytecode = True
    interrupts.install()
    with open(request_path, encoding="utf-8") as f:
        request = json.load(f)
    try:
        reply = run(request)
    except KeyboardInterrupt as e:  # the parent stops this run: no reply, no traceback
        signum = getattr(e, "signum", 2)
        sys.exit(128 + signum)
    tmp = reply_path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(reply, f)
    os.replace(tmp, reply_path)  # the parent reads a whole reply or none
    common.gc.freeze()  # as the command itself: no collections while the process exits


def run(request):
    """The reply to one request: {"code", "counts", "report"} or {"code", "error"}, or
    {"skipped": true} for a file of a folder that has no targets."""
    from ...capture.loader import NoTargets
    from ...engine.errors import GradtoolError
    from ...engine.frames import site_location
    from ...report import formats, text
    from . import gradcheck_cmd, inspect_cmd
    check_file = {"gradcheck": gradcheck_cmd.check_file,
                  "inspect": inspect_cmd.check_file}[request["command"]]
    options = request["options"]
    try:
        outcome = check_file(request["spec"], progress=False, **options)
    except GradtoolError as e:
        if isinstance(e, NoTargets) and request["from_directory"]:
            return {"skipped": True}
        return {"code": 2, "error": {
            "message": str(e), "details": getattr(e, "details", ""),
            "location": site_location(getattr(e, "location", None), relative=False)}}
    if options["json_"]:
        report = "".join(formats.json_document(outcome.findings))
    else:
        buffer = io.StringIO()
        formats.print_text(text.console_like(request["console"], buffer), outcome.findings,
                           options["quiet"], **outcome.text_options)
        report = buffer.getvalue()
    return {"code": outcome.code, "counts": outcome.counts(), "report": report}
