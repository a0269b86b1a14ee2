// Command outflow is the whole Outflow deployment in one binary: the API server and background workers
// (`serve`), the schema migrations (`migrate`), and administrative commands (`admin bootstrap`,
// `admin rollups rebuild`).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/outflowhq/outflow/internal/identity/accounts"
	"github.com/outflowhq/outflow/internal/platform/config"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// version is stamped at build time (-ldflags "-X main.version=...").
var version = "dev"

const usage = `outflow: self-hostable outbound email platform

Usage:
  outflow serve [--role api|worker|all]   run the API and/or the background workers (migrates first)
  outflow migrate                          apply application and job-queue migrations
  outflow admin bootstrap --email E --password P --org NAME
                                           create an owner, an organization and a full-access API key
  outflow admin rollups rebuild [--org ID] recompute the analytics rollups of every organization (or one)
  outflow version                          print the version

Configuration comes from the environment; see README.md.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "outflow:", err)
		}
		stop()
		os.Exit(1)
	}
}

// run dispatches a command line; main only adds signals and the exit code, so tests drive run directly.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command given")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "version", "--version":
		fmt.Fprintf(stdout, "outflow %s (%s)\n", version, runtime.Version())
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}

	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))

	switch cmd {
	case "serve":
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(stderr)
		role := fs.String("role", string(roleAll), "what this process runs: api, worker or all")
		if err := fs.Parse(rest); err != nil {
			return err
		}
		r, err := parseRole(*role)
		if err != nil {
			return err
		}
		return serve(ctx, cfg, r, logger, nil)
	case "migrate":
		return db.Migrate(ctx, cfg.DatabaseURL, logger)
	case "admin":
		switch {
		case len(rest) > 0 && rest[0] == "bootstrap":
			return bootstrap(ctx, cfg, logger, rest[1:], stdout, stderr)
		case len(rest) > 1 && rest[0] == "rollups" && rest[1] == "rebuild":
			return rollupsRebuild(ctx, cfg, rest[2:], stdout, stderr)
		}
		return errors.New("usage: outflow admin bootstrap --email E --password P --org NAME | outflow admin rollups rebuild [--org ID]")
	default:
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("unknown command %q", cmd)
	}
}

// bootstrap migrates (so it works on an empty database) and prints {user_id, organization_id, api_key}.
func bootstrap(ctx context.Context, cfg config.Config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("admin bootstrap", flag.ContinueOnError)
	fs.SetOutput(stderr)
	email := fs.String("email", "", "owner email address (required)")
	password := fs.String("password", "", "owner password, at least 10 characters (required)")
	org := fs.String("org", "", "organization name (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *email == "" || *password == "" || *org == "" {
		return errors.New("admin bootstrap: --email, --password and --org are all required")
	}
	if err := db.Migrate(ctx, cfg.DatabaseURL, logger); err != nil {
		return err
	}
	pool, err := db.Open(ctx, cfg.DatabaseURL, 4)
	if err != nil {
		return err
	}
	defer pool.Close()
	res, err := accounts.Bootstrap(ctx, pool, *email, *password, *org)
	if err != nil {
		return fmt.Errorf("admin bootstrap: %w", err)
	}
	return json.NewEncoder(stdout).Encode(res)
}
