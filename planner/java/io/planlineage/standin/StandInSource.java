package io.planlineage.standin;

import java.util.List;
import java.util.Map;

import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.connector.source.LookupTableSource;
import org.apache.flink.table.connector.source.ScanTableSource;
import org.apache.flink.table.connector.source.abilities.SupportsReadingMetadata;
import org.apache.flink.table.connector.source.abilities.SupportsSourceWatermark;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.functions.TableFunction;
import org.apache.flink.table.types.DataType;

/**
 * A source that scans, looks up, reads metadata and emits its own watermarks
 * (`WATERMARK FOR ts AS SOURCE_WATERMARK()`); it is planned, never run.
 */
final class StandInSource
        implements ScanTableSource, LookupTableSource, SupportsReadingMetadata, SupportsSourceWatermark {

    private final ResolvedSchema schema;
    private final Map<String, String> options;
    private final String changelogMode;
    private final boolean bounded;

    StandInSource(ResolvedSchema schema, Map<String, String> options, String changelogMode, boolean bounded) {
        this.schema = schema;
        this.options = options;
        this.changelogMode = changelogMode;
        this.bounded = bounded;
    }

    @Override
    public ChangelogMode getChangelogMode() {
        if ("all".equals(changelogMode)) {
            return ChangelogMode.all();
        }
        if ("upsert".equals(changelogMode) && schema.getPrimaryKey().isPresent()) {
            return ChangelogMode.upsert();
        }
        return ChangelogMode.insertOnly();
    }

    @Override
    public ScanRuntimeProvider getScanRuntimeProvider(ScanContext context) {
        // Asked for while planning (boundedness), turned into operators only when a job runs.
        final boolean isBounded = bounded;
        return new ScanRuntimeProvider() {
            @Override
            public boolean isBounded() {
                return isBounded;
            }
        };
    }

    @Override
    public LookupRuntimeProvider getLookupRuntimeProvider(LookupContext context) {
        // The planner inspects the provider's type, so it must be a real lookup provider: the one
        // every version has (LookupFunctionProvider and LookupFunction arrived in 1.16; 2.0 moved
        // TableFunctionProvider to `legacy`), found by name so one source compiles on each.
        for (String name : TABLE_FUNCTION_PROVIDERS) {
            try {
                Class<?> provider = Class.forName(name, false, StandInSource.class.getClassLoader());
                return (LookupRuntimeProvider) provider.getMethod("of", TableFunction.class).invoke(null, new NoRowsLookup());
            } catch (ClassNotFoundException e) {
                // the other package
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("cannot build the stand-in lookup", e);
            }
        }
        throw new IllegalStateException("no TableFunctionProvider in this Flink version");
    }

    private static final String[] TABLE_FUNCTION_PROVIDERS = {
        "org.apache.flink.table.connector.source.TableFunctionProvider",
        "org.apache.flink.table.legacy.connector.source.TableFunctionProvider",
    };

    @Override
    public Map<String, DataType> listReadableMetadata() {
        return ConnectorMetadata.readable(schema, options);
    }

    @Override
    public void applyReadableMetadata(List<String> metadataKeys, DataType producedDataType) {}

    @Override
    public void applySourceWatermark() {}

    @Override
    public DynamicTableSource copy() {
        return new StandInSource(schema, options, changelogMode, bounded);
    }

    @Override
    public String asSummaryString() {
        return StandInTableFactory.IDENTIFIER;
    }

    /** Looks up nothing; the shape of LookupFunction's `eval`, which 1.15 lacks. */
    public static final class NoRowsLookup extends TableFunction<RowData> {
        private static final long serialVersionUID = 1L;

        public void eval(Object... keys) {}
    }
}
