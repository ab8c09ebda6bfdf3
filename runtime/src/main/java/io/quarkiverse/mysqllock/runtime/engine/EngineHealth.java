package io.quarkiverse.mysqllock.runtime.engine;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a health check learned about an engine: whether locks can be taken and trusted now, why not, and figures.
 *
 * @param problem why it is down, or null when up
 */
public record EngineHealth(String problem, Map<String, Object> data) {

    public static EngineHealth up(Map<String, Object> data) {
        return new EngineHealth(null, data);
    }

    public static EngineHealth down(String problem, Map<String, Object> data) {
        return new EngineHealth(problem, data);
    }

    public boolean isUp() {
        return problem == null;
    }

    /** The same with more figures in front. */
    public EngineHealth withFirst(Map<String, Object> first) {
        Map<String, Object> all = new LinkedHashMap<>(first);
        all.putAll(data);
        return new EngineHealth(problem, all);
    }
}
