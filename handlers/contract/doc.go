// Package contract holds the contract tests. TestEveryOperationAnswersPerContract calls every operation of
// openapi/openapi.yaml through the generated SDK against the real server, with a valid credential and a
// request that satisfies the spec, and checks each answer is one the spec declares with a body that decodes
// and validates against it. TestHostileInputNeverAnswers5xx builds requests from the spec itself over raw HTTP
// (the SDK cannot send invalid UTF-8) and sends every text and integer field a value no column can store.
package contract
