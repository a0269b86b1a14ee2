// Package dbtest gives each test its own migrated Postgres database, cloned in tens of milliseconds from a
// template that is migrated once per schema version (CREATE DATABASE ... TEMPLATE ... STRATEGY file_copy).
//
// The cluster comes from OUTFLOW_TEST_DATABASE_URL (a superuser URL); `make test` starts a local one under
// .data/pgtest and sets it. A test that needs Postgres and finds none fails with instructions, never skips.
package dbtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/migrations"
)

// EnvVar names the variable holding the test cluster's superuser URL.
const EnvVar = "OUTFLOW_TEST_DATABASE_URL"

// defaultURL is the cluster `make test` starts (scripts/pg up .data/pgtest 55433 test).
const defaultURL = "postgres://postgres@127.0.0.1:55433/postgres?sslmode=disable"

// DB is one test's database.
type DB struct {
	// URL connects as the schema owner (what DATABASE_URL is in production).
	URL string
	// Pool is the application pool: it runs as the outflow_app role, so row-level security applies.
	Pool *pgxpool.Pool
}

var (
	templateOnce sync.Once
	templateName string
	templateErr  error
)

// New creates a database for t from the migrated template and drops it when t ends.
func New(t testing.TB) *DB {
	t.Helper()
	ctx := context.Background()
	admin := adminURL()
	templateOnce.Do(func() { templateName, templateErr = ensureTemplate(ctx, admin) })
	if templateErr != nil {
		t.Fatalf("dbtest: %v", templateErr)
	}

	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("dbtest: %v", unreachable(admin, err))
	}
	defer conn.Close(ctx)
	name := "outflow_test_" + randomSuffix()
	if _, err := conn.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s STRATEGY file_copy", name, templateName)); err != nil {
		t.Fatalf("dbtest: clone template: %v", err)
	}
	u := withDatabase(admin, name)
	pool, err := db.Open(ctx, u, 20)
	if err != nil {
		t.Fatalf("dbtest: open pool: %v", err)
	}
	t.Cleanup(func() {
		pool.Close()
		c, err := pgx.Connect(context.Background(), admin)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(context.Background(), fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", name))
	})
	return &DB{URL: u, Pool: pool}
}

// OwnerPool opens a pool that connects as the schema owner, bypassing row-level security; tests use it to
// check what really is in a table.
func (d *DB) OwnerPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), d.URL)
	if err != nil {
		t.Fatalf("dbtest: owner pool: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func adminURL() string {
	if u := os.Getenv(EnvVar); u != "" {
		return u
	}
	return defaultURL
}

func unreachable(u string, err error) error {
	return fmt.Errorf("cannot reach the test Postgres at %s: %v\n"+
		"Run the tests with `make test` (it starts a local cluster under .data/pgtest), "+
		"or set %s to a superuser URL of a Postgres 15+ cluster", redact(u), err, EnvVar)
}

// ensureTemplate makes sure the template for the current migrations exists. Several test binaries run at
// once: an advisory lock makes one of them build it while the others wait.
func ensureTemplate(ctx context.Context, admin string) (string, error) {
	version, err := schemaVersion()
	if err != nil {
		return "", err
	}
	name := "outflow_tmpl_" + version
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", unreachable(admin, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock(727271)"); err != nil {
		return "", err
	}
	defer func() { _, _ = conn.Exec(ctx, "SELECT pg_advisory_unlock(727271)") }()

	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return "", err
	}
	if exists {
		return name, nil
	}
	building := name + "_building"
	if _, err := conn.Exec(ctx, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", building)); err != nil {
		return "", err
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+building); err != nil {
		return "", err
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	migrateCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := db.Migrate(migrateCtx, withDatabase(admin, building), quiet); err != nil {
		return "", fmt.Errorf("migrate template: %w", err)
	}
	// The template must have no open connections when cloned; Migrate closed its own.
	if _, err := conn.Exec(ctx, fmt.Sprintf("ALTER DATABASE %s RENAME TO %s", building, name)); err != nil {
		return "", err
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf("ALTER DATABASE %s IS_TEMPLATE true", name)); err != nil {
		return "", err
	}
	return name, nil
}

// schemaVersion fingerprints the application migrations and River's, so a schema change gets a new template.
func schemaVersion() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(migrations.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(migrations.FS, path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\n", path)
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", err
	}
	m, err := rivermigrate.New(riverpgxv5.New(nil), nil)
	if err != nil {
		return "", err
	}
	for _, v := range m.AllVersions() {
		fmt.Fprintf(h, "river %d\n", v.Version)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

func withDatabase(admin, name string) string {
	u, err := url.Parse(admin)
	if err != nil {
		return admin
	}
	u.Path = "/" + name
	return u.String()
}

func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	return u.Redacted()
}

func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
