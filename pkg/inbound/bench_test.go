package inbound

import "testing"

func BenchmarkGuru(b *testing.B) {
	body := guruFixture(b, "transaction-approved.json", testToken)
	for b.Loop() {
		if _, err := handle(Guru(), body, nil, testCreds); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkYampi(b *testing.B) {
	body := mustFixture(b, "yampi/order-paid.json")
	h := signed(body, testSecret)
	for b.Loop() {
		if _, err := handle(Yampi(), body, h, testCreds); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkKiwify(b *testing.B) {
	body := mustFixture(b, "kiwify/order-approved.json")
	h := kiwifySigned(body, testKiwifyToken)
	for b.Loop() {
		if _, err := handle(Kiwify(), body, h, testCreds); err != nil {
			b.Fatal(err)
		}
	}
}
