package auth_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/internal/identity/accounts"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/seal"
	"github.com/outflowhq/outflow/internal/testkit/dbtest"
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

// BenchmarkAuthenticateSession compares verifying a session access token (ES256 signature, live-session and
// membership reads) with the cheapest possible round trip to the same database.
func BenchmarkAuthenticateSession(b *testing.B) {
	d := dbtest.New(b)
	ctx := context.Background()
	res, err := accounts.Bootstrap(ctx, d.Pool, "owner@acme.example", "correct horse battery staple", "acme")
	if err != nil {
		b.Fatal(err)
	}
	keyring, err := seal.NewKeyring([]byte(strings.Repeat("k", 32)))
	if err != nil {
		b.Fatal(err)
	}
	signer := auth.NewTokenSigner(d.Pool, keyring, "http://bench")
	sessions := accounts.NewSessions(d.Pool, signer)
	var pair accounts.TokenPair
	err = db.WithTx(ctx, d.Pool, func(ctx context.Context, tx pgx.Tx) error {
		pair, err = sessions.Start(ctx, tx, res.UserID, res.OrganizationID, "password")
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	authn := auth.NewAuthenticator(d.Pool, signer)
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
			if _, err := authn.Authenticate(ctx, pair.AccessToken); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRateLimitTake compares admitting one request against a credential's shared sliding window (one
// round trip: advisory lock, trim, sum, upsert) with the cheapest possible round trip to the same database.
func BenchmarkRateLimitTake(b *testing.B) {
	d := dbtest.New(b)
	ctx := context.Background()
	limiter := auth.NewLimiter(d.Pool)
	p := &auth.Principal{Kind: auth.KindAPIKey, CredentialID: uuid.New(), RateLimitPerMinute: 1 << 30}
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
			if err := limiter.Take(ctx, p); err != nil {
				b.Fatal(err)
			}
		}
	})
}
