from gradtool.frontends.cli import main

main()
