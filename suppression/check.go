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
