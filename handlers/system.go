package handlers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/heartbeat"
	"github.com/outflowhq/outflow/internal/platform/timezone"
)

// System implements the system operation group (readiness) and the workspace-wide reference data (time zones).
type System struct {
	pool    *pgxpool.Pool
	queries *dbq.Queries
	logger  *slog.Logger
	zones   timezone.Zones
}

// NewSystem builds the system handlers over the application pool and the time zones the composition root
// loaded once.
func NewSystem(pool *pgxpool.Pool, logger *slog.Logger, zones timezone.Zones) *System {
	return &System{pool: pool, queries: dbq.New(), logger: logger, zones: zones}
}

// schedulerMaxAge is how stale the scheduler heartbeat may be before readiness fails.
const schedulerMaxAge = 3 * heartbeat.Interval

// SystemGetReadiness checks the database, both migration sets, the workers and the scheduler.
func (s *System) SystemGetReadiness(ctx context.Context) (*api.Readiness, error) {
	checks := []api.ReadinessCheck{
		s.check(ctx, "database", s.checkDatabase),
		s.check(ctx, "migrations", s.checkMigrations),
		s.check(ctx, "workers", s.checkWorkers),
		s.check(ctx, "scheduler", s.checkScheduler),
	}
	ready := true
	for _, c := range checks {
		if !c.Ok && !c.Informational.Or(false) {
			ready = false
		}
	}
	return &api.Readiness{Ready: ready, Checks: checks}, nil
}

// checkFailure is a failed check: what was found and how to fix it.
type checkFailure struct {
	detail, fix string
}

func (f *checkFailure) Error() string { return f.detail }

func (s *System) check(ctx context.Context, name string, fn func(context.Context) (string, error)) api.ReadinessCheck {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	start := time.Now()
	detail, err := fn(ctx)
	c := api.ReadinessCheck{Name: name, Ok: err == nil, LatencyMs: api.NewOptInt64(time.Since(start).Milliseconds())}
	var f *checkFailure
	switch {
	case err == nil:
		c.Detail = api.NewOptString(detail)
	case errors.As(err, &f):
		c.Detail, c.Fix = api.NewOptString(f.detail), api.NewOptString(f.fix)
	default:
		// The cause may name internals: it goes to the log, the caller gets the request id to quote.
		s.logger.ErrorContext(ctx, "readiness check failed", slog.String("check", name), slog.String("error", err.Error()))
		c.Detail = api.NewOptString("the check could not run; the server log has the cause under this request id")
		c.Fix = api.NewOptString("Make sure Postgres is reachable from this process and see the server log.")
	}
	return c
}

func (s *System) checkDatabase(ctx context.Context) (string, error) {
	if err := s.pool.Ping(ctx); err != nil {
		return "", &checkFailure{detail: "Postgres did not answer: " + err.Error(), fix: "Check DATABASE_URL and that Postgres is running."}
	}
	return "Postgres answered", nil
}

func (s *System) checkMigrations(ctx context.Context) (string, error) {
	latest, err := db.LatestMigration()
	if err != nil {
		return "", err
	}
	applied, err := s.queries.MigrationVersion(ctx, s.pool)
	if err != nil {
		return "", err
	}
	if applied != latest {
		return "", &checkFailure{
			detail: fmt.Sprintf("schema is at migration %d, this build expects %d", applied, latest),
			fix:    "Run `outflow migrate` with this build's binary.",
		}
	}
	migrator, err := rivermigrate.New(riverpgxv5.New(s.pool), nil)
	if err != nil {
		return "", err
	}
	res, err := migrator.Validate(ctx, nil)
	if err != nil {
		return "", err
	}
	if !res.OK {
		return "", &checkFailure{detail: fmt.Sprintf("job queue schema is not current: %v", res.Messages), fix: "Run `outflow migrate`."}
	}
	return fmt.Sprintf("application schema at migration %d; job queue schema current", applied), nil
}

func (s *System) checkWorkers(ctx context.Context) (string, error) {
	active, err := s.queries.JobLeaderActive(ctx, s.pool)
	if err != nil {
		return "", err
	}
	if !active {
		return "", &checkFailure{
			detail: "no worker process is running",
			fix:    "Start `outflow serve --role worker` (or `--role all`) against the same database.",
		}
	}
	return "a worker process holds the job queue leadership", nil
}

func (s *System) checkScheduler(ctx context.Context) (string, error) {
	age, err := s.queries.HeartbeatAge(ctx, s.pool, heartbeat.Scheduler)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", &checkFailure{detail: "periodic jobs have never run", fix: "Start a worker process; its first heartbeat runs at start."}
	}
	if err != nil {
		return "", err
	}
	if time.Duration(age*float64(time.Second)) > schedulerMaxAge {
		return "", &checkFailure{
			detail: fmt.Sprintf("the last scheduler heartbeat was %.0f s ago", age),
			fix:    "Check that worker processes are running and not stuck; see their logs.",
		}
	}
	return fmt.Sprintf("last heartbeat %.0f s ago", age), nil
}
