package db

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// AppRole is the Postgres role application queries run as; migrations create it and grant it to the owner.
const AppRole = "outflow_app"

// RandomPageCost is the planner's cost of a random page read on the application's connections (unless
// DATABASE_URL sets random_page_cost). Outflow reads and writes its working set (leads, send tasks, plans) by
// key in batches of tens to thousands of rows; at Postgres's default of 4, meant for spinning disks, a batch of
// a few hundred keyed updates is planned as a scan of the whole campaign's leads. 1.1 is the usual setting for
// SSDs and cached data.
const RandomPageCost = "1.1"

// Open connects the application pool. Each connection switches to AppRole right after connecting, so the
// process needs only the owner's URL while every query it runs is subject to row-level security.
func Open(ctx context.Context, url string, maxConns int32) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse DATABASE_URL: %w", err)
	}
	cfg.MaxConns = maxConns
	if _, set := cfg.ConnConfig.RuntimeParams["random_page_cost"]; !set {
		cfg.ConnConfig.RuntimeParams["random_page_cost"] = RandomPageCost
	}
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		registerUUID(c.TypeMap())
		_, err := c.Exec(ctx, "SET ROLE "+AppRole)
		return err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to Postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to Postgres (has `outflow migrate` run?): %w", err)
	}
	return pool, nil
}
