package metadata

// LakeFile is one Parquet file of a lake snapshot. Every file holds the rows of exactly one
// bucket of one partition (or of the whole table when it has no partitions), with the table's
// columns followed by the lake system columns __bucket, __offset and __timestamp.
type LakeFile struct {
	// Path is relative to the lake root and uses forward slashes.
	Path string `json:"path"`
	// PartitionName is "" for tables without partitions.
	PartitionName string `json:"partition_name,omitempty"`
	// PartitionValues are the partition key values in partition-key order, nil without partitions.
	PartitionValues []string `json:"partition_values,omitempty"`
	Bucket          int32    `json:"bucket"`
	RowCount        int64    `json:"row_count"`
	SizeBytes       int64    `json:"size_bytes"`
	// FooterCRC32C is the CRC-32C (Castagnoli) of the file's Parquet footer (its metadata,
	// length and magic), as 8 lower-case hex digits. The lake checks it before decoding any
	// footer byte, since a damaged footer can make the Parquet and Arrow decoders allocate
	// what a flipped length says. "" (a manifest written before the lake recorded it): the
	// lake bounds the footer's declared lengths instead.
	FooterCRC32C string `json:"footer_crc32c,omitempty"`
}

// Names of the lake system columns, appended after the table's columns in every lake file.
const (
	LakeBucketColumn    = "__bucket"
	LakeOffsetColumn    = "__offset"
	LakeTimestampColumn = "__timestamp"
)
