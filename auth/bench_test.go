package auth_test

import (
	"context"
	"testing"

	"github.com/outflowhq/outflow/accounts"
	"github.com/outflowhq/outflow/auth"
	"github.com/outflowhq/outflow/dbtest"
)

// BenchmarkAuthenticateAPIKey compares verifying an API key (hash, narrow lookup, checks) with the cheapest
// possible round trip to the same database.
func BenchmarkAuthenticateAPIKey(b *testing.B) {
	d := dbtest.New(b)
	ctx := context.Background()
	res, err := accounts.Bootstrap(ctx, d.Pool, "owner@acme.example", "correct horse battery staple", "acme")
	if err != nil {
		b.Fatal(err)
	}
	authn := auth.NewAuthenticator(d.Pool, nil)
	b.Run("baseline", func(b *testing.B) {
		for b.Loop() {
			var one int
			if err := d.Pool.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("outflow", func(b *testing.B) {
		for b.Loop() {
			if _, err := authn.Authenticate(ctx, res.APIKey); err != nil {
				b.Fatal(err)
			}
		}
	})
}
