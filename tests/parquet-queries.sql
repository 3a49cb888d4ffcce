SELECT r.start AS api_start, r.globalTid, k.start AS kernel_start, k.end - k.start AS ns, s.value
FROM CUPTI_ACTIVITY_KIND_RUNTIME r
JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON r.correlationId = k.correlationId
JOIN StringIds s ON s.id = k.shortName
ORDER BY k.start, r.start
;;
SELECT s.value AS kernel, count(*) AS launches, sum(k.end - k.start) AS total_ns,
       avg(k.end - k.start) AS avg_ns, max(k.end - k.start) AS max_ns
FROM CUPTI_ACTIVITY_KIND_KERNEL AS k
JOIN StringIds AS s ON s.id = k.shortName
GROUP BY k.shortName, s.value
ORDER BY total_ns DESC, kernel
LIMIT 10
;;
SELECT s.value AS kernel, count(*) AS launches,
       avg(k.start - r.start) AS avg_latency_ns, max(k.start - r.start) AS max_latency_ns
FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r
JOIN CUPTI_ACTIVITY_KIND_KERNEL AS k ON k.correlationId = r.correlationId
JOIN StringIds AS s ON s.id = k.shortName
GROUP BY k.shortName, s.value
ORDER BY avg_latency_ns DESC, kernel
