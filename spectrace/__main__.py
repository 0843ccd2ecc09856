from spectrace.cli import main

main(prog_name="spectrace")  # not "python -m spectrace" in usage lines and --version
