package orgs

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// Edition is how a deployment grants features (config OUTFLOW_EDITION): a self-hosted deployment grants every
// feature to every organization; a hosted one grants paid features during a trial or on a paid plan.
type Edition string

// The two editions.
const (
	SelfHosted Edition = "self_hosted"
	Hosted     Edition = "hosted"
)

// UnifiedInbox answers nil when the organization may use the unified inbox (every /unibox operation), else a
// 403 unified_inbox_unavailable: on a hosted deployment the organization needs an active trial or a paid plan
// (no trial end); a self-hosted deployment has it for every organization. It runs in the caller's
// organization-scoped transaction.
func UnifiedInbox(ctx context.Context, tx pgx.Tx, edition Edition, org uuid.UUID, now time.Time) error {
	if edition != Hosted {
		return nil
	}
	ends, err := dbq.New().OrganizationTrialEndsAt(ctx, tx, org)
	if err != nil {
		return err
	}
	if ends != nil && !ends.After(now) {
		return apierror.Forbidden("unified_inbox_unavailable",
			"The unified inbox needs an active trial or a paid plan, and this organization's trial has ended.").
			WithFix("Choose a plan for the organization, then open the inbox again.")
	}
	return nil
}
