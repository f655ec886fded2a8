"""URL routes of the web UI and the API."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from web import api, views

urlpatterns = [
    path("", views.case_list, name="case-list"),
    path("cases/", views.case_list),
    path("cases/new/", views.case_new, name="case-new"),
    path("cases/create/", views.case_create, name="case-create"),
    path("cases/<int:case_id>/", views.case_detail, name="case-detail"),
    path("cases/<int:case_id>/status.json", views.case_status, name="case-status"),
    path("cases/<int:case_id>/timeline.json", views.case_timeline, name="case-timeline"),
    path("cases/<int:case_id>/moment.json", views.case_moment, name="case-moment"),
    path("cases/<int:case_id>/reanalyze/", views.case_reanalyze, name="case-reanalyze"),
    path("cases/<int:case_id>/bundle/", views.case_upload, name="case-upload"),
    path("cases/<int:case_id>/details/", views.case_details, name="case-details"),
    path("cases/<int:case_id>/compare/", views.case_compare, name="case-compare"),
    path("cases/<int:case_id>/compare.json", views.case_compare_json, name="case-compare-json"),
    path("collect.sh", views.collector, name="collector"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # Password change and reset by e-mail (Django's views; templates/registration/).
    path("accounts/", include("django.contrib.auth.urls")),
    path("admin/", admin.site.urls),
    path("api/cases/", api.case_list_create_api, name="api-cases"),
    path("api/cases/<int:case_id>/", api.case_report_api, name="api-case"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
]
