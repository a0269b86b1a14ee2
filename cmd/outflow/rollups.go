package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/analytics/rollup"
	"github.com/outflowhq/outflow/internal/platform/config"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// rollupsRebuild recomputes the analytics rollups of every organization (or the one --org names) from the
// source rows, each organization in its own transaction, and prints one line per organization rebuilt.
func rollupsRebuild(ctx context.Context, cfg config.Config, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("admin rollups rebuild", flag.ContinueOnError)
	fs.SetOutput(stderr)
	orgFlag := fs.String("org", "", "rebuild only this organization (its id); default every organization")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var only uuid.NullUUID
	if *orgFlag != "" {
		id, err := uuid.Parse(*orgFlag)
		if err != nil {
			return fmt.Errorf("admin rollups rebuild: --org must be an organization id (a UUID), not %q", *orgFlag)
		}
		only = uuid.NullUUID{UUID: id, Valid: true}
	}
	orgs, err := organizations(ctx, cfg.DatabaseURL, only)
	if err != nil {
		return fmt.Errorf("admin rollups rebuild: %w", err)
	}
	if only.Valid && len(orgs) == 0 {
		return fmt.Errorf("admin rollups rebuild: no organization has the id %s", only.UUID)
	}
	pool, err := db.Open(ctx, cfg.DatabaseURL, 2)
	if err != nil {
		return err
	}
	defer pool.Close()
	for _, o := range orgs {
		if err := db.WithOrgTx(ctx, pool, o.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
			return rollup.Rebuild(ctx, tx, o.OrganizationID)
		}); err != nil {
			return fmt.Errorf("admin rollups rebuild: organization %s: %w", o.OrganizationID, err)
		}
		fmt.Fprintf(stdout, "rebuilt the rollups of organization %s (%s)\n", o.OrganizationID, o.Name)
	}
	fmt.Fprintf(stdout, "%d organization(s) rebuilt\n", len(orgs))
	return nil
}

// organizations lists the organizations to rebuild. It reads across organizations, so it connects as the
// schema owner (the URL's role, which row-level security does not restrict), on one connection it closes.
func organizations(ctx context.Context, url string, only uuid.NullUUID) ([]dbq.RollupOrganizationsRow, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, errors.Join(errors.New("connect to Postgres"), err)
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	return dbq.New().RollupOrganizations(ctx, conn, only)
}
