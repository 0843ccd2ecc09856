from spectrace.cli import main

main()
