package io.planlineage.standin;

import java.util.Collections;
import java.util.Set;

import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.factories.DynamicTableSinkFactory;
import org.apache.flink.table.factories.DynamicTableSourceFactory;

/**
 * Stands in for a connector whose jar the analyser does not have (or must not run, like the
 * filesystem connector, which lists partitions while planning). It accepts any option and every
 * ability the planner may ask for, so that the compiled plan has the shape the real connector
 * would give it, while touching no external system.
 */
public final class StandInTableFactory implements DynamicTableSourceFactory, DynamicTableSinkFactory {

    public static final String IDENTIFIER = "planlineage-standin";
    /** The connector the user wrote; the stand-in replaced it in the catalog. */
    public static final String ORIGINAL_CONNECTOR = "planlineage.connector";
    /** insert, upsert or all: the changelog the real connector would produce. */
    public static final String CHANGELOG_MODE = "planlineage.changelog-mode";
    /**
     * "any": the sink accepts every change, whatever the real connector accepts. Set on the tables
     * of a batch job planned in streaming mode (CompiledPlan has no batch mode before 2.x), whose
     * aggregates would be updates there and are inserts in the job that runs.
     */
    public static final String SINK_CHANGES = "planlineage.sink-changes";

    @Override
    public String factoryIdentifier() {
        return IDENTIFIER;
    }

    @Override
    public Set<ConfigOption<?>> requiredOptions() {
        return Collections.emptySet();
    }

    @Override
    public Set<ConfigOption<?>> optionalOptions() {
        return Collections.emptySet();
    }

    @Override
    public DynamicTableSource createDynamicTableSource(Context context) {
        String mode = context.getCatalogTable().getOptions().getOrDefault(CHANGELOG_MODE, "insert");
        boolean bounded =
                context.getConfiguration().get(ExecutionOptions.RUNTIME_MODE) == RuntimeExecutionMode.BATCH;
        return new StandInSource(
                context.getCatalogTable().getResolvedSchema(), context.getCatalogTable().getOptions(), mode, bounded);
    }

    @Override
    public DynamicTableSink createDynamicTableSink(Context context) {
        boolean batch = context.getConfiguration().get(ExecutionOptions.RUNTIME_MODE) == RuntimeExecutionMode.BATCH
                || "any".equals(context.getCatalogTable().getOptions().get(SINK_CHANGES));
        return BucketedSinks.withBucketing(new StandInSink(
                context.getCatalogTable().getResolvedSchema(), context.getCatalogTable().getOptions(), batch));
    }
}
