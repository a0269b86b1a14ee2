package campaign

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
)

// keepConnections refuses steps whose app_action names a connection that is not one of org's (400
// invalid_step naming the step and the id), and locks the connections they name against a delete until tx
// ends: a delete checks for steps naming its connection after it locks it, so it sees these steps or they see
// it gone.
func keepConnections(ctx context.Context, tx pgx.Tx, org uuid.UUID, steps []Step) error {
	var ids []uuid.UUID
	for _, st := range steps {
		if st.Kind == StepAction && st.ActionType() == ActionApp {
			if id := st.AppAction().ConnectionID; !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	kept, err := queries.AppConnectionsKeep(ctx, tx, dbq.AppConnectionsKeepParams{OrganizationID: org, Ids: ids})
	if err != nil {
		return err
	}
	for _, st := range steps {
		if st.Kind != StepAction || st.ActionType() != ActionApp {
			continue
		}
		if id := st.AppAction().ConnectionID; !slices.Contains(kept, id) {
			return stepInvalid(int(st.Position), "action.app_connection_id",
				fmt.Sprintf("%s is not an app connection of this organization (GET /app-connections lists them).", id))
		}
	}
	return nil
}
