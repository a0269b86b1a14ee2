package idempotency_test

import (
	"fmt"
	"net/http"
	"testing"
)

// BenchmarkWrite compares a write sent with a fresh Idempotency-Key (claim, run, store) with the same write
// sent without one.
func BenchmarkWrite(b *testing.B) {
	bn := setup(b)
	bn.delay = 0
	b.Run("baseline", func(b *testing.B) {
		for b.Loop() {
			if r := bn.post(b, bn.key, "", `{"name":"x"}`); r.status != http.StatusCreated {
				b.Fatal(r.body)
			}
		}
	})
	b.Run("outflow", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			if r := bn.post(b, bn.key, fmt.Sprintf("k-%d", i), `{"name":"x"}`); r.status != http.StatusCreated {
				b.Fatal(r.body)
			}
		}
	})
}
