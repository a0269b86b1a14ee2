package events

import (
	"time"

	"github.com/google/uuid"
)

// The operations a bulk_operation.* event names (BulkOperation.Operation).
const (
	BulkContactsImport       = "contacts_import"
	BulkContactsUpdate       = "contacts_update"
	BulkContactsDelete       = "contacts_delete"
	BulkContactsVerification = "contacts_verification"
)

// BulkOperation is the data of bulk_operation.started, .completed and .failed, the events a long or wide
// write raises so integrators and the realtime `bulk:<operation_id>` topic can follow it without polling.
// Started carries what was asked (Total); completed and failed carry the outcome. Counts are of contacts.
type BulkOperation struct {
	OperationID uuid.UUID `json:"operation_id"`
	Operation   string    `json:"operation"`
	// Status is started, completed or failed, repeating the event type for consumers that store the data alone.
	Status    string `json:"status"`
	Total     int64  `json:"total"`
	Succeeded int64  `json:"succeeded"`
	Failed    int64  `json:"failed"`
	// Error says in a sentence why a failed operation stopped; empty otherwise.
	Error      string     `json:"error,omitempty"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

// BulkStarted is the started event's data for an operation over total contacts.
func BulkStarted(id uuid.UUID, operation string, total int64, at time.Time) BulkOperation {
	return BulkOperation{OperationID: id, Operation: operation, Status: "started", Total: total, StartedAt: at.UTC()}
}

// Finished is the completed event's data (or failed, when msg is not empty) for the operation b started.
func (b BulkOperation) Finished(succeeded, failed int64, msg string, at time.Time) (Type, BulkOperation) {
	b.Succeeded, b.Failed, b.Error = succeeded, failed, msg
	end := at.UTC()
	b.FinishedAt = &end
	if msg != "" {
		b.Status = "failed"
		return BulkOperationFailed, b
	}
	b.Status = "completed"
	return BulkOperationCompleted, b
}
