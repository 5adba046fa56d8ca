package sqlplan

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParse feeds arbitrary text to Parse and binds what parses: neither
// may panic, every failure must be an error, DDL must print in a form
// that parses back to the same statement, and UPDATE and DELETE in one
// that prints the same again.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"CREATE TABLE IF NOT EXISTS db.t (id BIGINT NOT NULL COMMENT 'x', m MAP<STRING, ARRAY<ROW<a INT, b DECIMAL(10, 2)>>>, PRIMARY KEY (id) NOT ENFORCED) COMMENT 'c' PARTITIONED BY (id) WITH ('bucket.num' = '2')",
		"ALTER TABLE t ADD IF NOT EXISTS PARTITION (dt = '2026-01-01')",
		"ALTER TABLE t SET ('k' = 'v')",
		"CALL sys.tier('t', ?)",
		"SHOW TABLES FROM d",
		"SELECT /*+ OPTIONS('a'='b') */ id, COUNT(*) FROM t WHERE dt = $1 AND name LIKE 'a\\_%' GROUP BY id HAVING COUNT(*) > 1 ORDER BY 1 DESC LIMIT 3 OFFSET 1",
		"SELECT * FROM `t$changelog` WHERE i IN (1, 2.5, '3') AND ts BETWEEN '2026-01-01' AND ?",
		"INSERT INTO t (id, arr) VALUES (1, ARRAY(1, -2)), (:a, :b)",
		"EXPLAIN SELECT CASE WHEN i > 1 THEN CAST(i AS DECIMAL(5, 1)) END FROM t",
		"UPDATE pk AS x SET w = x.w + ?, v = 'a' WHERE id IN (1, 2) AND NOT w IS NULL",
		"DELETE FROM `pk` WHERE id = :id OR v LIKE 'a%'",
		"SELECT ALL COUNT(ALL x), MAX ( ALL -y) FROM t GROUP BY z;",
		"SELECT (SELECT MAX(x) FROM db2.small AS s WHERE s.x < t.i), EXISTS (SELECT 1) FROM t WHERE i NOT IN (SELECT x FROM db2.small WHERE y = ?) AND i >= ALL (SELECT w FROM pk WHERE pk.id = t.id)",
		"UPDATE pk SET w = (SELECT MAX(x) FROM db2.small WHERE x < pk.id) WHERE id IN (SELECT x FROM db2.small WHERE y = ?) AND w > ANY (SELECT 1)",
		"SELECT 'unterminated",
		"CREATE TABLE t (a ARRAY<",
		"CREATE TABLE `users` (`id` bigint unsigned AUTO_INCREMENT,`created_at` datetime(3) NULL,`name` longtext,`active` boolean,`email` varchar(191),PRIMARY KEY (`id`),INDEX `idx_users_deleted_at` (`deleted_at`)) ENGINE=InnoDB",
		"CREATE TABLE t (k tinyint(1), u int(10) unsigned DEFAULT NULL, CONSTRAINT `fk` FOREIGN KEY (`u`) REFERENCES `o`(`id`), UNIQUE KEY (k))",
		"WITH a (x) AS (SELECT i FROM t WHERE i > ?), b AS (WITH c AS (SELECT 1 AS y) SELECT y FROM c) SELECT x, y FROM a JOIN b ON x = y",
		"CREATE OR REPLACE VIEW db.v (a, b) AS SELECT i, 'it\\'s' FROM t # c",
		"CREATE TABLE IF NOT EXISTS t2 (PRIMARY KEY (i) NOT ENFORCED) WITH ('bucket.num' = '2') AS SELECT i FROM t WHERE i = ?",
		"DROP VIEW IF EXISTS v",
		"(SELECT id FROM t ORDER BY i LIMIT ?) UNION ALL SELECT w FROM pk INTERSECT SELECT 1 EXCEPT DISTINCT (SELECT 2) ORDER BY 1 DESC LIMIT 2, ?",
		"INSERT INTO pk (id, v) SELECT id, Name FROM t WHERE i = $1 UNION SELECT 1, 'x';",
		"EXPLAIN ANALYZE (SELECT 1) INTERSECT ALL (SELECT 2)",
		"SELECT ?, d.a FROM (SELECT a FROM t WHERE a > ? INTERSECT SELECT b FROM u LIMIT ?) AS d WHERE d.a IN ((SELECT ?) EXCEPT SELECT 1) LIMIT 1, 2",
		"INSERT INTO t (a) WITH c AS (SELECT ? AS x) SELECT x FROM c EXCEPT SELECT 1 ON DUPLICATE KEY UPDATE a = VALUES(a)",
		"SELECT * FROM t NATURAL INNER JOIN u JOIN v ON v.a = u.a AND v.b IN (SELECT 1) LIMIT (SELECT 1)",
		"DROP VIEW IF EXISTS a, db.b",
		"CREATE VIEW v AS SELECT a FROM t UNION SELECT b FROM u INTERSECT SELECT 1",
		"SET NAMES utf8mb4 COLLATE utf8mb4_bin, @@session.sql_mode = 'a\\b''c', FOREIGN_KEY_CHECKS = -1, LOCAL x := `ON`",
		"SHOW VARIABLES WHERE Variable_name LIKE 'v%' OR `Value` = 'x'",
		"ALTER TABLE t ADD CONSTRAINT fk FOREIGN KEY (a, b) REFERENCES d.p (x, y) ON DELETE SET NULL ON UPDATE CASCADE",
		"ALTER TABLE t DROP FOREIGN KEY fk",
	} {
		f.Add(seed)
	}
	cat := newCatalog()
	f.Fuzz(func(t *testing.T, sql string) {
		st, err := Parse(sql)
		if err != nil {
			require.NotEmpty(t, err.Error())
			return
		}
		require.NotNil(t, st)
		_ = st.NumInput()
		text := st.String()
		switch s := st.(type) {
		case *Select:
			_, _ = BindSelect(context.Background(), s, cat, "fluss", nil)
		case *Explain:
			if s.Compound != nil {
				_, _ = BindCompound(context.Background(), s.Compound, cat, "fluss", nil)
			} else {
				_, _ = BindSelect(context.Background(), s.Select, cat, "fluss", nil)
			}
		case *Compound:
			_, _ = BindCompound(context.Background(), s, cat, "fluss", nil)
			again, err := Parse(text)
			require.NoError(t, err, "canonical form %q of %q", text, sql)
			require.Equal(t, text, again.String(), "canonical form %q of %q", text, sql)
		case *Insert:
			_, _ = BindInsert(context.Background(), s, cat, "fluss", nil)
		case *Update:
			_, _ = BindUpdate(context.Background(), s, cat, "fluss", nil)
			again, err := Parse(text)
			require.NoError(t, err, "canonical form %q of %q", text, sql)
			require.Equal(t, text, again.String(), "canonical form %q of %q", text, sql)
		case *Delete:
			_, _ = BindDelete(context.Background(), s, cat, "fluss", nil)
			again, err := Parse(text)
			require.NoError(t, err, "canonical form %q of %q", text, sql)
			require.Equal(t, text, again.String(), "canonical form %q of %q", text, sql)
		case *Call:
			_, _ = s.Values(nil)
		case *CreateView:
			if s.Compound != nil {
				_, _ = BindCompound(context.Background(), s.Compound, cat, "fluss", nil)
			} else {
				_, _ = BindSelect(context.Background(), s.Select, cat, "fluss", nil)
			}
			again, err := Parse(text)
			require.NoError(t, err, "canonical form %q of %q", text, sql)
			require.Equal(t, text, again.String(), "canonical form %q of %q", text, sql)
		case *CreateTableAs:
			_, _ = BindSelect(context.Background(), s.Select, cat, "fluss", nil)
			again, err := Parse(text)
			require.NoError(t, err, "canonical form %q of %q", text, sql)
			require.Equal(t, text, again.String(), "canonical form %q of %q", text, sql)
		default:
			again, err := Parse(text)
			require.NoError(t, err, "canonical form %q of %q", text, sql)
			require.Equal(t, withoutNotes(st), withoutNotes(again), "canonical form %q of %q", text, sql)
		}
	})
}
