package sqlplan

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParseDDL aims at the DDL grammar: statements that start like DDL,
// and data types alone. Neither parser may panic; a failure is an error
// with a message; a statement that parses prints in a form that parses
// back to the same statement, and a type to the same type.
func FuzzParseDDL(f *testing.F) {
	for _, seed := range []string{
		"CREATE TABLE t (id BIGINT, PRIMARY KEY (id) NOT ENFORCED)",
		"CREATE TABLE IF NOT EXISTS d.t (a DECIMAL(38, 10) NOT NULL COMMENT 'x''y', b TIMESTAMP_LTZ(3), c ARRAY<MAP<STRING, ROW<x INT, y BYTES>>>) COMMENT 'c' PARTITIONED BY (a) WITH ('bucket.num' = '4', 'table.datalake.enabled' = 'true')",
		"CREATE DATABASE IF NOT EXISTS d",
		"DROP DATABASE IF EXISTS d CASCADE",
		"DROP TABLE IF EXISTS `we``ird`",
		"ALTER TABLE t ADD IF NOT EXISTS PARTITION (dt = '2026-01-01', r = 'US')",
		"ALTER TABLE t DROP IF EXISTS PARTITION (dt = '2026-01-01')",
		"ALTER TABLE t SET ('table.log.ttl' = '7 d')",
		"SHOW PARTITIONS d.t",
		"DESCRIBE t",
		"USE d",
		"CALL sys.kv_snapshot('t')",
		"CHAR(10)",
		"TIME(9)",
		"VARCHAR(5)",
		"MAP<INT, ARRAY<ROW<a BOOLEAN>>>",
		"CREATE TABLE t (a ROW<",
		"CREATE TABLE `u` (`id` bigint unsigned AUTO_INCREMENT,`at` datetime(3) NULL,`s` varchar(191),PRIMARY KEY (`id`),INDEX `ix` (`at`))",
		"CREATE TABLE t (a INT NOT NULL DEFAULT -5, b STRING DEFAULT 'x''y', c BOOLEAN DEFAULT TRUE, d TIMESTAMP(3) DEFAULT CURRENT_TIMESTAMP(3), e TIMESTAMP DEFAULT NOW())",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if dt, err := ParseDataType(text); err != nil {
			require.NotEmpty(t, err.Error())
		} else {
			again, err := ParseDataType(dt.String())
			require.NoError(t, err, "type %q printed as %q", text, dt.String())
			require.Equal(t, dt, again, "type %q printed as %q", text, dt.String())
		}
		st, err := Parse(text)
		if err != nil {
			require.NotEmpty(t, err.Error())
			return
		}
		switch st.(type) {
		case *Select, *Explain, *Insert, *Update, *Delete, *Call:
			// Covered by FuzzParse.
			return
		}
		printed := st.String()
		again, err := Parse(printed)
		require.NoError(t, err, "%q printed as %q", text, printed)
		// Notes, declared MySQL types and indexes are not printed.
		require.Equal(t, withoutNotes(st), withoutNotes(again), "%q printed as %q", text, printed)
	})
}
