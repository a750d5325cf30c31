package postgres

// PurgeSQL lets the tests read the plan of each retention statement.
var PurgeSQL = purgeSQL
