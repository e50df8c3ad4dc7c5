module gmpecho

go 1.19
