package db

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Beginner is what WithTx needs: a pool, a connection or an outer transaction (which nests as a savepoint).
type Beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// WithTx runs fn in a transaction and commits when fn returns nil. The transaction is always rolled back in a
// deferred call that ignores cancellation, so a canceled request never leaves a connection mid-transaction.
func WithTx(ctx context.Context, b Beginner, fn func(ctx context.Context, tx pgx.Tx) error) error {
	return withTx(ctx, b.Begin, fn)
}

func withTx(ctx context.Context, begin func(context.Context) (pgx.Tx, error), fn func(ctx context.Context, tx pgx.Tx) error) error {
	tx, err := begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if err := fn(ctx, tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// WithOrgTx is WithTx scoped to one organization: it sets the organization for row-level security for the
// length of the transaction and puts it in the context handed to fn (see OrgID).
func WithOrgTx(ctx context.Context, b Beginner, org uuid.UUID, fn func(ctx context.Context, tx pgx.Tx) error) error {
	if org == uuid.Nil {
		return errors.New("db: organization-scoped transaction without an organization")
	}
	if tb, ok := b.(txBeginner); ok {
		// A pool or connection begins and scopes the transaction in one round trip: the organization is a
		// formatted UUID (hex digits and dashes), so it is safe inside the simple-protocol BEGIN statement.
		return withTx(ctx, func(ctx context.Context) (pgx.Tx, error) {
			return tb.BeginTx(ctx, pgx.TxOptions{BeginQuery: "BEGIN; SELECT set_config('outflow.organization_id', '" + org.String() + "', true)"})
		}, func(ctx context.Context, tx pgx.Tx) error { return fn(withOrg(ctx, org), tx) })
	}
	return WithTx(ctx, b, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT set_config('outflow.organization_id', $1, true)", org.String()); err != nil {
			return fmt.Errorf("scope transaction to organization: %w", err)
		}
		return fn(withOrg(ctx, org), tx)
	})
}

// txBeginner is a pool or a connection: what can begin a transaction with its own BEGIN statement.
type txBeginner interface {
	BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error)
}

type orgKey struct{}

func withOrg(ctx context.Context, org uuid.UUID) context.Context {
	return context.WithValue(ctx, orgKey{}, org)
}

// OrgID returns the organization of the enclosing WithOrgTx. Code that writes tenant rows on behalf of a
// caller's transaction (events, audit) takes the organization from here so it can never disagree with RLS.
func OrgID(ctx context.Context) (uuid.UUID, bool) {
	org, ok := ctx.Value(orgKey{}).(uuid.UUID)
	return org, ok && org != uuid.Nil
}
