module dclaims

go 1.19
