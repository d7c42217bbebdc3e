B	initial_hJ θύ
ΏYO€>~s[ΏiξΎY	NΏπn™=Λ€>ΦΎ