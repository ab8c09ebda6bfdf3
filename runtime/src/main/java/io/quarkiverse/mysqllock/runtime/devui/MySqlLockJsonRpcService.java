package io.quarkiverse.mysqllock.runtime.devui;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.quarkiverse.mysqllock.LockInfo;
import io.quarkiverse.mysqllock.runtime.MySqlLockManager;
import io.quarkiverse.mysqllock.runtime.MySqlLockManagerFactory;
import io.quarkiverse.mysqllock.runtime.engine.EngineHealth;
import io.smallrye.common.annotation.Blocking;

/**
 * The Dev UI card's JSON-RPC methods (registered in dev mode only): per lock datasource, the engine and why it was
 * chosen, its health, the locks this instance holds and every holder the server knows of; and force-release of a
 * lease. Values are plain maps, lists, strings and numbers, so they serialise the same everywhere.
 */
public class MySqlLockJsonRpcService {

    /** One entry per lock datasource in use. */
    @Blocking
    public List<Map<String, Object>> getManagers() {
        List<Map<String, Object>> managers = new ArrayList<>();
        for (MySqlLockManager manager : MySqlLockManagerFactory.created()) {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("datasource", manager.dataSourceName());
            EngineHealth health = manager.health();
            entry.put("up", health.isUp());
            if (!health.isUp()) {
                entry.put("problem", health.problem());
            }
            Map<String, String> figures = new LinkedHashMap<>();
            health.data().forEach((key, value) -> figures.put(key, String.valueOf(value)));
            entry.put("engine", figures.get("engine"));
            entry.put("reason", figures.get("engine chosen because"));
            entry.put("health", figures);
            entry.put("held", locks(manager.held()));
            try {
                entry.put("holders", locks(manager.holders()));
            } catch (RuntimeException e) {
                entry.put("holders", List.of());
                entry.put("holdersProblem", e.getMessage());
            }
            managers.add(entry);
        }
        return managers;
    }

    /** The card's label: how many locks this instance holds. */
    public String getHeldCount() {
        return String.valueOf(MySqlLockManagerFactory.created().stream().mapToInt(manager -> manager.held().size()).sum());
    }

    /**
     * Force-releases a lease (LEASE engine only): its holder is told within its renewal period and its fencing token is
     * refused from then on. The outcome is in the result, never an exception, so the page can show it.
     */
    @Blocking
    public Map<String, Object> forceRelease(String datasource, String name) {
        Map<String, Object> outcome = new LinkedHashMap<>();
        MySqlLockManager manager = MySqlLockManagerFactory.created(datasource).orElse(null);
        if (manager == null) {
            outcome.put("released", false);
            outcome.put("message", "No lock manager in use for datasource '" + datasource + "'");
            return outcome;
        }
        try {
            boolean released = manager.forceRelease(name, MySqlLockJobsJsonRpcService.BY, "from the Dev UI");
            outcome.put("released", released);
            outcome.put("message", released ? "Lease '" + name + "' released; its holder is told it lost it"
                    : "No lease '" + name + "' is held");
        } catch (RuntimeException e) {
            outcome.put("released", false);
            outcome.put("message", e.getMessage());
        }
        return outcome;
    }

    private static List<Map<String, Object>> locks(List<LockInfo> infos) {
        List<Map<String, Object>> locks = new ArrayList<>();
        for (LockInfo info : infos) {
            Map<String, Object> lock = new LinkedHashMap<>();
            lock.put("name", info.name());
            lock.put("holder", info.holder());
            lock.put("since", info.since() == null ? null : info.since().toString());
            lock.put("fencingToken", info.fencingToken());
            lock.put("mode", info.mode().name());
            locks.add(lock);
        }
        return locks;
    }
}
