package auth

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// Limiter counts hits in fixed windows kept in Postgres, so every API process enforces one shared limit.
type Limiter struct {
	pool *pgxpool.Pool
	now  func() time.Time
}

// NewLimiter builds a limiter over the application pool.
func NewLimiter(pool *pgxpool.Pool) *Limiter {
	return &Limiter{pool: pool, now: time.Now}
}

// Limit is a budget: at most Max hits per Window.
type Limit struct {
	Max    int
	Window time.Duration
}

// Allow counts one hit against key and returns a 429 *apierror.Error with Retry-After once the window's
// budget is spent. key names what is limited, for example "login:ip:203.0.113.9".
func (l *Limiter) Allow(ctx context.Context, key string, limit Limit) error {
	now := l.now().UTC()
	start := now.Truncate(limit.Window)
	hits, err := dbq.New().RateLimitHit(ctx, l.pool, dbq.RateLimitHitParams{Key: key, WindowStart: start})
	if err != nil {
		return fmt.Errorf("rate limit: %w", err)
	}
	if int(hits) > limit.Max {
		retry := int(start.Add(limit.Window).Sub(now).Seconds()) + 1
		return apierror.TooManyRequests("rate_limited", "Too many attempts. Wait before trying again.", retry)
	}
	return nil
}

// DefaultRateLimitPerMinute is the request budget of an API key or OAuth token without an override.
const DefaultRateLimitPerMinute = 60

// MaxRateLimitPerMinute bounds a per-key override (the sliding window keeps one row per admitted request).
const MaxRateLimitPerMinute = 10000

// EffectiveRateLimit is a key's budget: its override, or the default for 0.
func EffectiveRateLimit(perMinute int) int {
	if perMinute <= 0 {
		return DefaultRateLimitPerMinute
	}
	return perMinute
}

// Take admits one request of an API key or OAuth token against its per-minute budget in a sliding window
// shared by every API process, or returns a 429 with Retry-After. Sessions are not limited here.
func (l *Limiter) Take(ctx context.Context, p *Principal) error {
	if p == nil || p.IsSession() {
		return nil
	}
	wait, err := dbq.New().RateLimitTake(ctx, l.pool, dbq.RateLimitTakeParams{
		CredentialID: p.CredentialID, MaxRequests: int32(EffectiveRateLimit(p.RateLimitPerMinute)), WindowSeconds: 60,
	})
	if err != nil {
		return fmt.Errorf("rate limit: %w", err)
	}
	if wait > 0 {
		return rateLimited(p, int(wait))
	}
	return nil
}

// rateLimited is the 429 of a credential whose budget is spent for another retry seconds.
func rateLimited(p *Principal, retry int) error {
	return apierror.TooManyRequests("rate_limited",
		fmt.Sprintf("This credential allows %d requests per minute. Wait before trying again.", EffectiveRateLimit(p.RateLimitPerMinute)),
		retry)
}
