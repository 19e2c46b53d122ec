from cronctl.cli import main

main()
