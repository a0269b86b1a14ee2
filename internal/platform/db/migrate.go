package db

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/outflowhq/outflow/migrations"
)

// MigrationsTable records which application migrations have run.
const MigrationsTable = "schema_migrations"

// migrateLockKey serializes migrations of several processes starting at once (pg_advisory_lock key).
const migrateLockKey = 7_346_101_915

// Migrate applies the application migrations and then River's, as the schema owner named by url. It is
// idempotent and safe to run from several processes at once: a session advisory lock serializes them.
func Migrate(ctx context.Context, url string, logger *slog.Logger) error {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return fmt.Errorf("migrate: connect: %w", err)
	}
	defer pool.Close()

	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate: connect: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrateLockKey); err != nil {
		return fmt.Errorf("migrate: lock: %w", err)
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrateLockKey)
	}()

	sqlDB := stdlib.OpenDBFromPool(pool)
	defer sqlDB.Close()
	provider, err := goose.NewProvider(goose.DialectPostgres, sqlDB, migrations.FS, goose.WithTableName(MigrationsTable))
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	results, err := provider.Up(ctx)
	if err != nil {
		return fmt.Errorf("migrate: application schema: %w", err)
	}
	for _, r := range results {
		logger.InfoContext(ctx, "migration applied", slog.String("source", path.Base(r.Source.Path)), slog.Duration("took", r.Duration))
	}

	migrator, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return fmt.Errorf("migrate: job queue: %w", err)
	}
	res, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if err != nil {
		return fmt.Errorf("migrate: job queue schema: %w", err)
	}
	for _, v := range res.Versions {
		logger.InfoContext(ctx, "job queue migration applied", slog.Int("version", v.Version))
	}
	return nil
}

// LatestMigration is the version of the newest embedded application migration; readiness compares it with
// what the database has applied.
func LatestMigration() (int64, error) {
	entries, err := fs.ReadDir(migrations.FS, ".")
	if err != nil {
		return 0, err
	}
	var latest int64
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".sql") {
			continue
		}
		prefix, _, _ := strings.Cut(name, "_")
		v, err := strconv.ParseInt(prefix, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("migration %s: name must start with a number", name)
		}
		latest = max(latest, v)
	}
	return latest, nil
}
