package postgres

// InsertAudit lets the tests write an event in a transaction of their own,
// as a store writes it with its change.
var InsertAudit = insertAudit

// RegisterFastArrays lets the tests compare the array encoders with pgx's.
var RegisterFastArrays = registerFastArrays
