module example.com/mexicantrain/kit

go 1.19
