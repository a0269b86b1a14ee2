package contacts

import dbq "github.com/outflowhq/outflow/gen/db"

// queries runs the package's static statements (queries/contacts.sql); sqlc's Queries hold no state.
var queries = dbq.New()
