// Package contract holds the contract test: it calls every operation of openapi/openapi.yaml through the
// generated SDK against the real server, with a valid credential and a request that satisfies the spec, and
// checks each answer is one the spec declares with a body that decodes and validates against it.
package contract
