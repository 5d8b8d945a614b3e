from django.http import JsonResponse


def health(request):
    """``GET /api/v1/health``: the process answers (for load balancers, and the benchmark's
    trivial view: the framework's own ceiling on this stack)."""
    return JsonResponse({"ok": True})
