// Package pushdown holds the consolidated pushdown rules: it splits the
// conjuncts of a bound WHERE clause over a scan (DESIGN §5.2).
//
// Split has three outputs, and these rules:
//
//   - PartitionFilter: the AND of the top-level conjuncts that read only
//     partition keys and convert to the predicate tree. It prunes
//     partitions exactly, comparing typed values (PrunePartitions), so
//     those conjuncts are consumed: they never reach the post filter.
//     The exception is a key whose partitions may be named coarser than
//     their values (metadata.PartitionNamesMayBeCoarse): pruning keeps a
//     partition whose range may match, and the conjunct is evaluated
//     again above the scan.
//   - Pushed: the data predicate handed to the scan. For a log table in
//     ARROW format it is every convertible non-partition conjunct; for
//     other tables it is nil until the lake source decides what it
//     accepts. A scan may use it to skip batches, files or row groups by
//     statistics, never to decide which rows match.
//   - PostFilter: every non-partition conjunct, pushed or not, evaluated
//     again above the scan; also a partition-key conjunct that does not
//     convert.
//
// Pushdown never changes a result. A conjunct is consumed only when it is
// converted exactly: a literal is converted to its column's type only when
// nothing is lost, and otherwise keeps its exact value (tinyint_col = 300
// matches no row, int_col > 2.5 compares with 2.5, never 2), and the
// converted predicate answers TRUE for exactly the rows the SQL
// expression does, under three-valued logic. Anything else is kept in the
// post filter, where it costs time but never rows.
//
// The package reads sqlplan's bound expressions and speaks predicate and
// metadata; it plans nothing and touches no storage.
package pushdown
