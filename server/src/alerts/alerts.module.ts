import { Module } from '@nestjs/common';
import { AlertThrottlesRepository } from './alert-throttles.repository';
import { AlertsService } from './alerts.service';

@Module({ providers: [AlertsService, AlertThrottlesRepository], exports: [AlertsService] })
export class AlertsModule {}
