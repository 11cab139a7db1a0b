from planlineage.cli.main import console

console()
