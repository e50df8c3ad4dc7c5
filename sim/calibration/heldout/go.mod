module gmpheldout

go 1.19
