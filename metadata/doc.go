// Package metadata is the vocabulary every other fluss package speaks:
// table paths and buckets, schemas and data types, table options, values,
// and the rules that place a row in a partition and a bucket. It imports
// nothing of fluss's own, only the standard library and Arrow.
//
// Invariants:
//
//   - Every value crossing a layer is in the canonical form of its type
//     (listed in value.go) and has been checked by CoerceValue, the only
//     place that converts and range-checks user values. Compare orders
//     canonical values; numbers compare exactly across int64, float64 and
//     DecimalValue.
//   - A type's Arrow form is Fluss's (DataType.ArrowType); AppendValue and
//     ValueAt convert between it and canonical values without loss.
//   - Bucketing is Fluss's, bit for bit: EncodeKey is the compacted key
//     encoding and BucketOf the seeded murmur3 of FlussBucketingFunction
//     (tail bytes sign-extended, as in Fluss's Java client), so a key lands
//     in the bucket a Fluss cluster would choose. testdata/bucketing pins
//     Fluss's published vectors.
//   - Partition names are Fluss's (PartitionValueString, PartitionName), and
//     ParsePartitionValue gives back typed values, so partitions compare as
//     their type does, not as text.
//   - A change type is one ChangeType everywhere: its value is the byte a
//     log batch stores per record, String is Fluss's short form (+A, +I,
//     -U, +U, -D) and ChangelogName its long one (insert, update_before,
//     update_after, delete).
//   - A TableInfo is immutable once NewTableInfo or AlterOptions returns it;
//     its Config is derived from its Options (Resolve recomputes it after
//     JSON decoding, which does not store it).
//
// Nothing here panics on user input or on bytes read from disk: malformed
// values, types, options and names are errors wrapping the sentinels in
// errors.go.
package metadata
