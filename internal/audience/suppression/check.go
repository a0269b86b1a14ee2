package suppression

import (
	"context"
	"errors"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
)

// InForce returns the suppression that stops mail to address (normalized, as Normalize reads it) in the
// organization: the address's own entry, else its domain's; expired entries do not count. ok is false when
// the address may be mailed. Every send path asks this before handing a message over, and the contact view
// shows what it answers.
func InForce(ctx context.Context, tx dbq.DBTX, org uuid.UUID, address string) (entry dbq.Suppression, ok bool, err error) {
	_, domain, _ := strings.Cut(address, "@")
	entry, err = dbq.New().SuppressionInForce(ctx, tx, dbq.SuppressionInForceParams{OrganizationID: org, Email: address, Domain: domain})
	if errors.Is(err, pgx.ErrNoRows) {
		return dbq.Suppression{}, false, nil
	}
	return entry, err == nil, err
}

// Blocked answers which of the addresses (normalized) may not be mailed, each with the entry that stops it
// (its own entry before its domain's), in one query: what a send of many recipients asks.
func Blocked(ctx context.Context, tx dbq.DBTX, org uuid.UUID, addresses []string) (map[string]dbq.Suppression, error) {
	domains := make([]string, len(addresses))
	for i, a := range addresses {
		_, domains[i], _ = strings.Cut(a, "@")
	}
	entries, err := dbq.New().SuppressionsInForceAny(ctx, tx, dbq.SuppressionsInForceAnyParams{OrganizationID: org, Emails: addresses, Domains: domains})
	if err != nil || len(entries) == 0 {
		return nil, err
	}
	out := map[string]dbq.Suppression{}
	for i, a := range addresses {
		for _, e := range entries {
			if !(e.Kind == "email" && e.Value == a || e.Kind == "domain" && e.Value == domains[i]) {
				continue
			}
			if prev, seen := out[a]; !seen || preferred(e, prev) {
				out[a] = e
			}
		}
	}
	return out, nil
}

// preferred says whether e rather than prev is the entry to name: an address's own entry before its domain's,
// then the newest.
func preferred(e, prev dbq.Suppression) bool {
	if (e.Kind == "email") != (prev.Kind == "email") {
		return e.Kind == "email"
	}
	return e.CreatedAt.After(prev.CreatedAt)
}

// Record suppresses address (normalized) for good because its recipient's side bounced, complained or
// unsubscribed (source), naming the campaign whose send it was about, in the caller's transaction. It answers
// whether it wrote the entry: an entry in force for good is kept as it is, an expiring one made permanent.
func Record(ctx context.Context, tx dbq.DBTX, org uuid.UUID, address, source, reason string, campaign uuid.NullUUID) (bool, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return false, err
	}
	n, err := dbq.New().SuppressionRecord(ctx, tx, dbq.SuppressionRecordParams{OrganizationID: org, ID: id, Value: address,
		Reason: reason, Source: source, CampaignID: campaign})
	return n > 0, err
}
