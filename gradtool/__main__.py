from gradtool.cli import main

main()
