module replaybench

go 1.19
