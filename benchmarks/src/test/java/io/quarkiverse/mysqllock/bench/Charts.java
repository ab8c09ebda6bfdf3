package io.quarkiverse.mysqllock.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.category.DefaultCategoryDataset;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/** The report's charts, drawn by JFreeChart into PNG files beside the report (headless). */
final class Charts {

    private static final int WIDTH = 720;
    private static final int HEIGHT = 420;

    private Charts() {
    }

    /** Series of (x, y) points, by series name, in the order given. */
    static final class Lines {
        final Map<String, Map<Double, Double>> series = new LinkedHashMap<>();

        Lines add(String name, double x, double y) {
            series.computeIfAbsent(name, k -> new LinkedHashMap<>()).put(x, y);
            return this;
        }
    }

    /** A line chart, the x axis logarithmic (sizes that grow tenfold), the y axis logarithmic when asked. */
    static void lines(Path file, String title, String xLabel, String yLabel, Lines lines, boolean logY) throws IOException {
        XYSeriesCollection data = new XYSeriesCollection();
        lines.series.forEach((name, points) -> {
            XYSeries series = new XYSeries(name);
            points.forEach((x, y) -> series.add(x.doubleValue(), Math.max(logY ? 1e-3 : 0, y)));
            data.addSeries(series);
        });
        JFreeChart chart = ChartFactory.createXYLineChart(title, xLabel, yLabel, data, PlotOrientation.VERTICAL, true,
                false, false);
        XYPlot plot = chart.getXYPlot();
        LogAxis x = new LogAxis(xLabel);
        x.setBase(10);
        x.setStandardTickUnits(NumberAxis.createIntegerTickUnits());
        plot.setDomainAxis(x);
        if (logY) {
            LogAxis y = new LogAxis(yLabel);
            y.setBase(10);
            plot.setRangeAxis(y);
        }
        XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, true);
        for (int i = 0; i < data.getSeriesCount(); i++) {
            renderer.setSeriesStroke(i, new BasicStroke(2f));
        }
        plot.setRenderer(renderer);
        style(chart);
        ChartUtils.saveChartAsPNG(file.toFile(), chart, WIDTH, HEIGHT);
    }

    /** A bar chart: a value by category and series. */
    static void bars(Path file, String title, String categoryLabel, String valueLabel,
            Map<String, Map<String, Double>> valuesBySeries) throws IOException {
        DefaultCategoryDataset data = new DefaultCategoryDataset();
        valuesBySeries.forEach((series, values) -> values.forEach((category, value) -> data.addValue(value, series,
                category)));
        JFreeChart chart = ChartFactory.createBarChart(title, categoryLabel, valueLabel, data, PlotOrientation.VERTICAL,
                true, false, false);
        style(chart);
        ChartUtils.saveChartAsPNG(file.toFile(), chart, WIDTH, HEIGHT);
    }

    private static void style(JFreeChart chart) {
        chart.setBackgroundPaint(Color.WHITE);
        chart.getPlot().setBackgroundPaint(new Color(250, 250, 250));
    }
}
